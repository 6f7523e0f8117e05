// A tiny `--name value` option parser: every option takes one value; unknown ones are errors.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <string>

#include "myattn/isa.hpp"
#include "myattn/precision.hpp"

namespace myattn::cli {

/// Thrown for anything the user typed wrong; main prints it as one `myattn:` line, exit 2.
struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class Args {
  public:
    /// Parses `args` (after the subcommand); `allowed` lists the option names without "--".
    Args(std::string_view command, std::span<char* const> args, const std::set<std::string>& allowed);

    [[nodiscard]] bool help() const noexcept { return help_; }
    [[nodiscard]] std::optional<std::string> get(const std::string& name) const;
    [[nodiscard]] std::string require(const std::string& name) const;
    /// An integer option of at least `least`.
    [[nodiscard]] std::optional<std::size_t> integer(const std::string& name, std::size_t least) const;
    /// A positive integer option.
    [[nodiscard]] std::optional<std::size_t> count(const std::string& name) const { return integer(name, 1); }
    /// `--isa NAME`, checked against the ISAs this build runs on this machine (UsageError or
    /// IsaError); changes nothing: the caller passes it to MyAttn.
    [[nodiscard]] std::optional<Isa> isa() const;
    /// `--precision NAME` (UsageError for an unknown name); f32 when not given.
    [[nodiscard]] Precision precision() const;

  private:
    std::string command_;
    std::map<std::string, std::string> values_;
    bool help_ = false;
};

/// Runs `body` with at most `threads` worker threads (all cores when unset); more than TBB
/// allows are clamped to that, with one line on stderr.
void with_threads(std::optional<std::size_t> threads, const std::function<void()>& body);

} // namespace myattn::cli
