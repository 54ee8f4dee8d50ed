// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "bench/flags.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "core/enums.h"

namespace roialign {
namespace bench {

int ReadFlags(int argc, char** argv, const char* help, const std::function<FlagResult(const char* arg)>& take) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::fputs(help, stdout);
      return 0;
    }
    switch (take(argv[i])) {
      case FlagResult::kTaken:
        break;
      case FlagResult::kUnknown:
        std::fprintf(stderr, "unknown option '%s' (see --help)\n", argv[i]);
        return 2;
      case FlagResult::kRefused:
        return 2;
    }
  }
  return -1;
}

const char* FlagValue(const char* arg, const char* name) {
  const size_t n = std::strlen(name);
  return std::strncmp(arg, name, n) == 0 && arg[n] == '=' ? arg + n + 1 : nullptr;
}

std::vector<std::string> SplitList(const std::string& list, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, sep)) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

bool ParseDType(std::string* name, DType* dtype) {
  std::transform(name->begin(), name->end(), name->begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return internal::ParseEnum(*name, dtype);
}

}  // namespace bench
}  // namespace roialign
