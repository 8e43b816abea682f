// A shared object that exports a function, but not graft's entry point.
extern "C" __attribute__((visibility("default"))) int graft_plugin_entry_misspelled(void) { return 42; }
