// boo: the layer-normalization signature, LayerNormSignature (boo/norm.hpp
// holds it with RMS norm's).
#pragma once

#include "boo/norm.hpp"
