// Exception types thrown by myattn. Every message names the tensor or file at fault and, for
// shapes, gives the expected and the actual value.
#pragma once

#include <stdexcept>

#include "myattn/export.hpp"

namespace myattn {

/// A tensor has the wrong rank or size, or sizes whose product overflows.
class MYATTN_EXPORT ShapeError : public std::invalid_argument {
  public:
    using std::invalid_argument::invalid_argument;
};

/// A caller-supplied argument is unusable (null data, aliasing buffers, bad ISA name...).
class MYATTN_EXPORT ArgumentError : public std::invalid_argument {
  public:
    using std::invalid_argument::invalid_argument;
};

/// The requested ISA is unknown, not compiled in, or not runnable on this CPU.
class MYATTN_EXPORT IsaError : public std::invalid_argument {
  public:
    using std::invalid_argument::invalid_argument;
};

/// An object is used in a state that allows nothing but assigning or destroying it: a MyAttn
/// after it was moved from. A bug in the caller, never a matter of input.
class MYATTN_EXPORT MovedFromError : public std::logic_error {
  public:
    using std::logic_error::logic_error;
};

/// A file cannot be read or written, or its contents are malformed.
class MYATTN_EXPORT FileError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

} // namespace myattn
