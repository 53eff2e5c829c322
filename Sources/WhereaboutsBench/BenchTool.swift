public import CommandLineSupport
import WhereaboutsSettings

// The benchmarks' workhorse, driven by scripts/bench.sh: each subcommand measures one thing and prints one line of
// JSON. Benchmark code stays out of the operator's tool and out of `swift test` (no timing assertions there).

let usage = """
    usage: whereabouts-bench <command> [options]

    commands:
      map            write the synthetic floor map (--agents N --out FILE)
      engine         readings per CPU second through LocatorEngine (--agents --tags --seconds [--problems FILE]
                     [--positioning grid|trilateration, default the engine's: grid] [--lag S] [--workers N]
                     [--cell-size M: the grid's cells, default per floor from its zones])
      tags           the engine's resident memory under a flood of new tag ids (--ids 1000000 [--maximum-tags N])
      decode         HCI events per CPU second through the agent's decoder (--fixture hci_events.jsonl)
      batches        readings per CPU second through the locator's batch decoder, against its JSON tree path
      loop           the locator's service loop: CPU per reading on its own thread, without a broker (--agents 200
                     --tags 10000 --seconds 20 [--workers N])
      capture        write a btsnoop capture of iBeacon adverts (--out FILE --rate 1000 --seconds 30)
      stream         publish agents' batches through a broker; optionally wait for the locator (--broker URL)
      latency        reading-to-occupancy latency through broker and locator under load (--broker URL)
      watch-process  sample a process's VmRSS, VmHWM and CPU time until it exits (--pid PID)

    Run scripts/bench.sh for the whole suite; docs/benchmarks.md explains every figure.
    """

/// The benchmark tool's commands: `whereabouts-bench` hands its arguments here.
public enum BenchTool {
    /// Runs the subcommand that `list` (the arguments without the program name) names; the exit status says how it went.
    public static func run(_ list: [String]) async -> ExitStatus {
        var words = list[...]
        let command = words.popFirst()
        /// The subcommand's settings: flags only.
        func settings(_ table: [Setting]) throws(SettingsError) -> Settings {
            try Settings(processArguments: Array(words), table: table)
        }
        do {
            switch command {
            case "map":
                let settings = try settings([.value("out"), .value("agents")])
                guard let path = settings.value("out") else { throw UsageError("--out FILE is required") }
                let agents = try settings.integer("agents") ?? 50
                try FileAccess.write(Array(try BenchMap(agents: agents).text.utf8), to: path)
                return .success
            case "engine": return try EngineBench.run(settings(EngineBench.table))
            case "tags": return try TagFloodBench.run(settings(TagFloodBench.table))
            case "decode": return try DecodeBench.run(settings(DecodeBench.table))
            case "batches": return try BatchDecodeBench.run(settings(BatchDecodeBench.table))
            case "loop": return try LoopBench.run(settings(LoopBench.table))
            case "capture": return try CaptureCommand.run(settings(CaptureCommand.table))
            case "stream": return try await StreamCommand.run(settings(StreamCommand.table))
            case "latency": return try await LatencyCommand.run(settings(LatencyCommand.table))
            case "watch-process": return try WatchProcessCommand.run(settings(WatchProcessCommand.table))
            case "help", "--help", nil:
                print(usage)
                return list.isEmpty ? .usage : .success
            case let other?:
                throw UsageError("unknown command \"\(other)\"\n\(usage)")
            }
        } catch let error as SettingsError {
            return error.report(program: "whereabouts-bench", usage: usage)
        } catch let error as UsageError {
            printError("whereabouts-bench: \(error.message)")
            return .usage
        } catch {
            printError("whereabouts-bench: \(error)")
            return .failure
        }
    }
}
