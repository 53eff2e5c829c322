import CommandLineSupport
import WhereaboutsCore

// The operator's tool. Each subcommand parses its options, calls into the libraries, and maps errors to exit
// statuses: 0 ok, 1 runtime failure, 2 bad usage or a bad map.

let usage = """
    usage: whereabouts <command> [options]

    commands:
      map check FILE      validate a floor map; print a summary (exit 0) or every problem with its path (exit 2)

    exit status: 0 ok, 1 runtime failure, 2 bad usage or bad input
    """

var arguments = Arguments(Array(CommandLine.arguments.dropFirst()))
let status: ExitStatus
do {
    switch arguments.positional() {
    case "map":
        guard arguments.positional() == "check" else { throw UsageError("usage: whereabouts map check FILE") }
        status = try MapCheckCommand.run(&arguments)
    case "help", nil:
        print(usage)
        status = arguments.flag("help") || CommandLine.arguments.count > 1 ? .success : .usage
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
status.exitProcess()
