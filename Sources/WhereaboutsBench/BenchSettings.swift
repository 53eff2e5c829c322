import WhereaboutsSettings

// The bench's flags are described by its usage's command list and docs/benchmarks.md, not one by one: it is a
// measuring tool driven by scripts/bench.sh, not a program an operator reads `--help` for. These factories give its
// tables that one pointer as their help, as flags only.
extension Setting {
    static func value(_ name: String) -> Setting {
        .value(name, "VALUE", "a benchmark parameter (docs/benchmarks.md)", key: .flagOnly)
    }

    static func switchFlag(_ name: String) -> Setting {
        .switchFlag(name, "a benchmark switch (docs/benchmarks.md)", key: .flagOnly)
    }
}
