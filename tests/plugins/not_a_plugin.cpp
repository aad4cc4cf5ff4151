// A perfectly good shared library that is not a Switchyard plugin.
extern "C" __attribute__((visibility("default"))) int not_a_plugin_answer() { return 42; }
