import CommandLineSupport

// whereabouts-agent: hears BLE tags through raw HCI (or replays a btsnoop capture), aggregates them per window and
// publishes one reading batch per window to the broker. Exit status: 0 after a clean shutdown or the end of a
// replay, 1 on a runtime failure (no Bluetooth, the broker refused us), 2 on bad usage.

let status = await AgentCommand.run(Array(CommandLine.arguments.dropFirst()))
status.exitProcess()
