/* Seed source for fuzz_plugin_file: tools/fuzz.sh compiles this into a small shared library
 * carrying the target record a kernel plugin has (an ELF section ".gguflow_target.<TARGET>",
 * plugins/kernels/kernel_table.cc), so the corpus has a file the scanner accepts without the
 * Highway plugins being built. */
__attribute__((used, section(".gguflow_target." GGUFLOW_SEED_TARGET))) const char gguflow_seed_target[] = GGUFLOW_SEED_TARGET;
int gguflow_kernels_get(void) { return 0; }
