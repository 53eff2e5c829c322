import CommandLineSupport
import WhereaboutsTool

// The operator's tool; its subcommands live in WhereaboutsTool.
await OperatorTool.run(Array(CommandLine.arguments.dropFirst())).exitProcess()
