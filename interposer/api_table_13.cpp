// The API table of CUDA 13.x: generated from that release's CUPTI headers (api_table_13.inc,
// gen_api_table.py) and compiled against them alone, so every member offset is that release's.
// The body is api_table_major.h, shared with the other major.
#include <cupti.h>  // CUDA 13.x's: also defines the params structs of both domains

#define CAPGUARD_CUDA_MAJOR 13
#define CAPGUARD_API_TABLE_INC "interposer/api_table_13.inc"
#include "interposer/api_table_major.h"
