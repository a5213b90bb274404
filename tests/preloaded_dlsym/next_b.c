const char* which(void) { return "b"; }
