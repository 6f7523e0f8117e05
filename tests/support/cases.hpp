// The case lists tools/make_reference.py writes (cases.txt): one case a line, '#' comments.
#pragma once

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace myattn::test {

/// The case lines of the file at `path`, each as a stream of its whitespace-separated columns.
inline std::vector<std::istringstream> case_lines(const std::string& path) {
    std::ifstream in(path);
    REQUIRE(in.good());
    std::vector<std::istringstream> out;
    std::string line;
    while (std::getline(in, line))
        if (!line.empty() && line[0] != '#') out.emplace_back(line);
    return out;
}

} // namespace myattn::test
