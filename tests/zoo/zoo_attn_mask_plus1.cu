/* zoo_attn_mask_plus1.cu - zoo member (issue 33): a causal row sees one key more than the bottom-right mask allows (zoo_attn.cuh; README.md says what the
 * harness must report). */
#include "zoo_attn.cuh"

ZOO_ATTN_MEMBER("zoo_attn_mask_plus1", ZOO_ATTN_MASK_PLUS1)
