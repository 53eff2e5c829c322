import CommandLineSupport
import WhereaboutsCore

// The operator's tool. Each subcommand parses its options, calls into the libraries, and maps errors to exit
// statuses: 0 ok, 1 runtime failure, 2 bad usage or a bad map.

let usage = """
    usage: whereabouts <command> [options]

    commands:
      map check FILE      validate a floor map; print a summary (exit 0) or every problem with its path (exit 2)
      sim                 simulate tags walking a map; write readings and truth (JSON Lines)
      replay              run the engine over a readings recording; write positions and events
      evaluate            score positions against truth: error, floor and zone accuracy, zone-change delay
      render              draw a map and the last positions as SVG
      watch               a terminal dashboard of zone occupancy, live from the broker
      web                 the live map in a browser: floors, moving tags, zones, events (Server-Sent Events)
      free-port           print a free TCP port on 127.0.0.1 (for scripts)
      calibrate           fit agents' and tags' radio constants from a walk with known positions

    exit status: 0 ok, 1 runtime failure, 2 bad usage or bad input
    """

/// Runs one subcommand and maps its errors to an exit status.
func runCommand(_ list: [String]) async -> ExitStatus {
    var arguments = Arguments(list)
    let status: ExitStatus
    do {
        switch arguments.positional() {
        case "map":
            guard arguments.positional() == "check" else { throw UsageError("usage: whereabouts map check FILE") }
            status = try MapCheckCommand.run(&arguments)
        case "sim":
            status = try await SimCommand.run(&arguments)
        case "replay":
            status = try ReplayCommand.run(&arguments)
        case "evaluate":
            status = try EvaluateCommand.run(&arguments)
        case "render":
            status = try RenderCommand.run(&arguments)
        case "watch":
            status = try await WatchCommand.run(&arguments)
        case "web":
            status = try await WebCommand.run(&arguments)
        case "free-port":
            status = try FreePortCommand.run(&arguments)
        case "calibrate":
            status = try CalibrateCommand.run(&arguments)
        case "help", nil:
            print(usage)
            status = arguments.flag("help") || !list.isEmpty ? .success : .usage
        case let other?:
            throw UsageError("unknown command \"\(other)\"\n\(usage)")
        }
    } catch let error as UsageError {
        printError("whereabouts: \(error.message)")
        status = .usage
    } catch {
        printError("whereabouts: \(error)")
        status = .failure
    }
    return status
}

await runCommand(Array(CommandLine.arguments.dropFirst())).exitProcess()
