// A shared object that exports graft's entry point name as data, not a function: calling it
// would jump into these bytes.
extern "C" __attribute__((visibility("default"))) const unsigned char graft_plugin_entry[16] = {0xff, 0xff, 0xff, 0xff};
