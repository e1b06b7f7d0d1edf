/* GGML tensor element types: ids as stored in GGUF files and the block geometry of each.
 *
 * Plain C so that kernel plugins, ops and the runtime share one table. A type id whose
 * format was removed from GGML (or never existed) has block_size 0: files naming it can
 * still be opened, and the type is reported by name only when its bytes are needed. */
#ifndef GGUFLOW_GGML_TYPE_H
#define GGUFLOW_GGML_TYPE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum GgmlType {
  GGML_TYPE_F32 = 0,
  GGML_TYPE_F16 = 1,
  GGML_TYPE_Q4_0 = 2,
  GGML_TYPE_Q4_1 = 3,
  /* 4, 5: Q4_2, Q4_3 (removed from GGML in 2023) */
  GGML_TYPE_Q5_0 = 6,
  GGML_TYPE_Q5_1 = 7,
  GGML_TYPE_Q8_0 = 8,
  GGML_TYPE_Q8_1 = 9,
  GGML_TYPE_Q2_K = 10,
  GGML_TYPE_Q3_K = 11,
  GGML_TYPE_Q4_K = 12,
  GGML_TYPE_Q5_K = 13,
  GGML_TYPE_Q6_K = 14,
  GGML_TYPE_Q8_K = 15,
  GGML_TYPE_IQ2_XXS = 16,
  GGML_TYPE_IQ2_XS = 17,
  GGML_TYPE_IQ3_XXS = 18,
  GGML_TYPE_IQ1_S = 19,
  GGML_TYPE_IQ4_NL = 20,
  GGML_TYPE_IQ3_S = 21,
  GGML_TYPE_IQ2_S = 22,
  GGML_TYPE_IQ4_XS = 23,
  GGML_TYPE_I8 = 24,
  GGML_TYPE_I16 = 25,
  GGML_TYPE_I32 = 26,
  GGML_TYPE_I64 = 27,
  GGML_TYPE_F64 = 28,
  GGML_TYPE_IQ1_M = 29,
  GGML_TYPE_BF16 = 30,
  /* 31..33: Q4_0_4_4, Q4_0_4_8, Q4_0_8_8 (repacked layouts, removed from files) */
  GGML_TYPE_TQ1_0 = 34,
  GGML_TYPE_TQ2_0 = 35,
  /* 36..38: IQ4_NL_4_4, IQ4_NL_4_8, IQ4_NL_8_8 (removed) */
  GGML_TYPE_MXFP4 = 39,
  GGML_TYPE_COUNT = 40
} GgmlType;

/* Block geometry: `block_size` elements are stored in `type_size` bytes.
 * block_size == 0 means "we cannot compute sizes for this id". */
typedef struct GgmlTypeInfo {
  const char* name;
  uint32_t block_size;
  uint32_t type_size;
} GgmlTypeInfo;

/* Returns the entry for `type`; ids outside the table get {NULL, 0, 0}. */
const GgmlTypeInfo* ggml_type_info(uint32_t type);

#ifdef __cplusplus
}
#endif

#endif /* GGUFLOW_GGML_TYPE_H */
