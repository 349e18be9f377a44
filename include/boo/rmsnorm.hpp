// boo: the RMS-normalization signature, RmsNormSignature, MIOpen's
// t5layernorm (boo/norm.hpp holds it with layer norm's).
#pragma once

#include "boo/norm.hpp"
