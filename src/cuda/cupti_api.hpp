// boo: CUPTI's activity API, loaded at run time.
#pragma once

#include <cupti_activity.h>

#include <string>

#include "boo/status.hpp"

namespace boo::cuda {

#define BOO_CUPTI_FUNCTIONS(X)                                                                          \
  X(cuptiGetResultString) X(cuptiActivityEnable) X(cuptiActivityDisable) X(cuptiActivityRegisterCallbacks) \
  X(cuptiActivityFlushAll) X(cuptiActivityGetNextRecord) X(cuptiActivityPushExternalCorrelationId)       \
  X(cuptiActivityPopExternalCorrelationId) X(cuptiGetTimestamp)

struct CuptiApi {
#define BOO_CUPTI_DECLARE(name) decltype(&::name) name = nullptr;
  BOO_CUPTI_FUNCTIONS(BOO_CUPTI_DECLARE)
#undef BOO_CUPTI_DECLARE
  std::string library_path;
};

/// Loads libcupti once per process (thread-safe); the error is sticky.
Result<const CuptiApi*> cupti_api();

Status cupti_status(const CuptiApi& api, CUptiResult result, const char* call,
                    std::source_location where = std::source_location::current());

}  // namespace boo::cuda
