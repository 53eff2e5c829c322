import CommandLineSupport

// whereabouts-locator: subscribes to the agents' readings, runs the engine, publishes positions, zone occupancy
// and events. Exit status: 0 after a clean shutdown, 1 on a runtime failure, 2 on bad usage or a bad map.

let status = await LocatorCommand.run(Array(CommandLine.arguments.dropFirst()))
status.exitProcess()
