// The public face of myattn: include this one header.
#pragma once

#include "myattn/attention.hpp"
#include "myattn/bfloat16.hpp"
#include "myattn/errors.hpp"
#include "myattn/isa.hpp"
#include "myattn/parameters.hpp"
#include "myattn/precision.hpp"
#include "myattn/safetensors.hpp"
#include "myattn/tensor.hpp"
#include "myattn/version.hpp"
