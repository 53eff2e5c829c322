import CommandLineSupport

// The benchmarks' workhorse, driven by scripts/bench.sh: each subcommand measures one thing and prints one line of
// JSON. Benchmark code stays out of the operator's tool and out of `swift test` (no timing assertions there).

let usage = """
    usage: whereabouts-bench <command> [options]

    commands:
      map            write the synthetic floor map (--agents N --out FILE)
      engine         readings per CPU second through LocatorEngine (--agents --tags --seconds [--problems FILE]
                     [--positioning grid|trilateration])
      decode         HCI events per CPU second through the agent's decoder (--fixture hci_events.jsonl)
      capture        write a btsnoop capture of iBeacon adverts (--out FILE --rate 1000 --seconds 30)
      stream         publish agents' batches through a broker; optionally wait for the locator (--broker URL)
      latency        reading-to-occupancy latency through broker and locator under load (--broker URL)
      watch-process  sample a process's VmRSS, VmHWM and CPU time until it exits (--pid PID)

    Run scripts/bench.sh for the whole suite; docs/benchmarks.md explains every figure.
    """

func runCommand(_ list: [String]) async -> ExitStatus {
    var arguments = Arguments(list)
    do {
        switch arguments.positional() {
        case "map":
            guard let path = try arguments.option("out") else { throw UsageError("--out FILE is required") }
            let agents = try arguments.integer("agents") ?? 50
            try arguments.finish()
            try FileAccess.write(Array(try BenchMap(agents: agents).text.utf8), to: path)
            return .success
        case "engine": return try EngineBench.run(&arguments)
        case "decode": return try DecodeBench.run(&arguments)
        case "capture": return try CaptureCommand.run(&arguments)
        case "stream": return try await StreamCommand.run(&arguments)
        case "latency": return try await LatencyCommand.run(&arguments)
        case "watch-process": return try WatchProcessCommand.run(&arguments)
        case "help", nil:
            print(usage)
            return list.isEmpty ? .usage : .success
        case let other?:
            throw UsageError("unknown command \"\(other)\"\n\(usage)")
        }
    } catch let error as UsageError {
        printError("whereabouts-bench: \(error.message)")
        return .usage
    } catch {
        printError("whereabouts-bench: \(error)")
        return .failure
    }
}

await runCommand(Array(CommandLine.arguments.dropFirst())).exitProcess()
