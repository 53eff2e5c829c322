public import CommandLineSupport
import WhereaboutsCore
import WhereaboutsSettings

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

/// The operator's tool: `whereabouts` hands its arguments here.
public enum OperatorTool {
    /// Runs the subcommand that `arguments` (without the program name) names; the exit status says how it went.
    public static func run(_ arguments: [String]) async -> ExitStatus {
        await runCommand(arguments)
    }
}

/// Runs one subcommand and maps its errors to an exit status.
///
/// The subcommands read flags and, for the broker, the environment (`WHEREABOUTS_BROKER`, …), but no configuration
/// file: this is the operator's tool, run by hand from a shell on any machine, and what a command does should be
/// what its command line and the shell say, not a file in /etc written for a service.
func runCommand(_ list: [String]) async -> ExitStatus {
    var words = list[...]
    let command = words.popFirst()
    var commandUsage = usage
    /// The subcommand's settings; `--help` prints its usage.
    func settings(_ table: [Setting], _ usage: String, positionals: Int = 0) throws(SettingsError) -> Settings {
        commandUsage = usage
        return try Settings(processArguments: Array(words), table: table, positionalLimit: positionals)
    }
    let status: ExitStatus
    do {
        switch command {
        case "map":
            guard words.popFirst() == "check" else { throw UsageError(MapCheckCommand.usage) }
            status = try MapCheckCommand.run(settings([], MapCheckCommand.usage, positionals: 1))
        case "sim":
            status = try await SimCommand.run(settings(SimCommand.table, SimCommand.usage))
        case "replay":
            status = try ReplayCommand.run(settings(ReplayCommand.table, ReplayCommand.usage))
        case "evaluate":
            status = try EvaluateCommand.run(settings(EvaluateCommand.table, EvaluateCommand.usage))
        case "render":
            status = try RenderCommand.run(settings(RenderCommand.table, RenderCommand.usage))
        case "watch":
            status = try await WatchCommand.run(settings(WatchCommand.table, WatchCommand.usage))
        case "web":
            status = try await WebCommand.run(settings(WebCommand.table, WebCommand.usage))
        case "free-port":
            status = try FreePortCommand.run(settings([], FreePortCommand.usage))
        case "calibrate":
            status = try CalibrateCommand.run(settings(CalibrateCommand.table, CalibrateCommand.usage))
        case "help", "--help", nil:
            print(usage)
            status = list.isEmpty ? .usage : .success
        case let other?:
            throw UsageError("unknown command \"\(other)\"\n\(usage)")
        }
    } catch let error as SettingsError {
        status = error.report(program: "whereabouts", usage: commandUsage)
    } catch let error as UsageError {
        printError("whereabouts: \(error.message)")
        status = .usage
    } catch {
        printError("whereabouts: \(error)")
        status = .failure
    }
    return status
}
