import CommandLineSupport
import WhereaboutsBench

// The benchmarks' workhorse, driven by scripts/bench.sh; the benchmarks themselves live in WhereaboutsBench.
await BenchTool.run(Array(CommandLine.arguments.dropFirst())).exitProcess()
