// Placeholder until this module lands; see the issue that builds it.
enum WhereaboutsMQTTPlaceholder {}
