#pragma once

#include <span>

namespace myattn::cli {

// Each command parses its own options and returns the exit status; errors are thrown.
int info(std::span<char* const> args);
int demo(std::span<char* const> args);
int run(std::span<char* const> args);

} // namespace myattn::cli
