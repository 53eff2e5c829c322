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
      web                 the live map in a browser: floors, moving tags, zones, events (Server-Sent Events);
                          web --edit MAP: the map editor (draw floors over a plan picture, check, save)
      free-port           print a free TCP port on 127.0.0.1 (for scripts)
      calibrate           fit agents' and tags' radio constants from a walk with known positions
      survey              record a survey from the broker (points on standard input), then report and calibrate
      tag                 GATT jobs on a tag through the agent that hears it best: tag battery|info|provision TAG,
                          tag battery --all [--spread SECONDS] (agents run with --gatt)

    exit status: 0 ok, 1 runtime failure, 2 bad usage or bad input
    """

/// The operator's tool: `whereabouts` hands its arguments here.
public enum OperatorTool {
    /// Runs the subcommand that `list` (the arguments without the program name) names, and maps its errors to an exit
    /// status.
    ///
    /// The subcommands read flags and, for the broker, the environment (`WHEREABOUTS_BROKER`, …), but no configuration
    /// file: this is the operator's tool, run by hand from a shell on any machine, and what a command does should be
    /// what its command line and the shell say, not a file in /etc written for a service. `web` is the exception: it
    /// runs as a service for a wall screen, so it reads the environment, an `--env-file` and `/etc/whereabouts/web.conf`
    /// as the locator and the agent do.
    public static func run(_ list: [String]) async -> ExitStatus {
        var words = list[...]
        let command = words.popFirst()
        var commandUsage = usage
        /// The subcommand's settings; `--help` prints the usage made from the same declaration.
        func settings(_ interface: CommandInterface) throws(SettingsError) -> Settings {
            commandUsage = interface.usage
            return try Settings(processArguments: Array(words), interface: interface)
        }
        let status: ExitStatus
        do {
            switch command {
            case "map":
                guard words.popFirst() == "check" else { throw UsageError(MapCheckCommand.interface.synopsisText) }
                status = try MapCheckCommand.run(settings(MapCheckCommand.interface))
            case "sim":
                status = try await SimCommand.run(settings(SimCommand.interface))
            case "replay":
                status = try ReplayCommand.run(settings(ReplayCommand.interface))
            case "evaluate":
                status = try EvaluateCommand.run(settings(EvaluateCommand.interface))
            case "render":
                status = try RenderCommand.run(settings(RenderCommand.interface))
            case "watch":
                status = try await WatchCommand.run(settings(WatchCommand.interface))
            case "web" where words.contains(where: { $0 == "--edit" || $0.hasPrefix("--edit=") }):
                status = try await WebEditCommand.run(settings(WebEditCommand.interface))
            case "web":
                status = try await WebCommand.run(settings(WebCommand.interface))
            case "free-port":
                status = try FreePortCommand.run(settings(FreePortCommand.interface))
            case "calibrate":
                status = try CalibrateCommand.run(settings(CalibrateCommand.interface))
            case "tag":
                status = try await TagCommand.run(settings(TagCommand.interface))
            case "survey":
                status = try await SurveyCommand.run(settings(SurveyCommand.interface))
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
}
