// swift-tools-version:6.1
import PackageDescription

// Data flows one way: radio -> agent -> broker -> locator -> broker -> dashboards.
// Pure modules hold the logic; adapters own the C handles; executables only wire.
let package = Package(
    name: "whereabouts",
    products: [
        .executable(name: "whereabouts-agent", targets: ["whereabouts-agent"]),
        .executable(name: "whereabouts-locator", targets: ["whereabouts-locator"]),
        .executable(name: "whereabouts", targets: ["whereabouts"]),
    ],
    targets: [
        // MARK: - Pure modules (no I/O, no clock, no global randomness, no Foundation)
        .target(name: "WhereaboutsJSON"),
        // The engine owns no file format: it computes with values and imports nothing of ours.
        .target(name: "WhereaboutsCore"),
        // The map file: reading and validating it (problems with JSON paths), editing and writing it back.
        .target(name: "WhereaboutsMapFile", dependencies: ["WhereaboutsCore", "WhereaboutsJSON"]),
        .target(name: "WhereaboutsWire", dependencies: ["WhereaboutsCore", "WhereaboutsJSON"]),
        .target(name: "WhereaboutsAdvertising", dependencies: ["WhereaboutsCore"]),
        // A host's connection side (links, ACL credits, L2CAP, signalling) and an ATT/GATT client, as state machines
        // that take bytes and return actions: the HCI adapter drives them over a controller.
        .target(name: "WhereaboutsGATT", dependencies: ["WhereaboutsAdvertising"]),
        // The floor map drawn as SVG, for `whereabouts render` and the live page alike.
        .target(name: "WhereaboutsDrawing", dependencies: ["WhereaboutsCore", "WhereaboutsWire"]),
        // Simulated agents aggregate adverts with the agent's own code, so the accuracy harness measures what ships.
        .target(
            name: "WhereaboutsSimulation", dependencies: ["WhereaboutsCore", "WhereaboutsWire", "WhereaboutsAgent"]
        ),
        // A service's life with the broker (status, outbox, goodbye) and the pipeline protocol both services follow.
        .target(name: "WhereaboutsSession", dependencies: ["WhereaboutsWire"]),
        // The locator's pipeline as a state machine that returns actions: pure, so tests drive it without a broker.
        .target(
            name: "WhereaboutsLocator",
            dependencies: [
                "WhereaboutsCore", "WhereaboutsWire", "WhereaboutsJSON", "WhereaboutsCalibration", "WhereaboutsSession",
                "WhereaboutsSettings",
            ]
        ),
        // Fits the radio constants: guided (a walk with known positions) and automatic (agents hearing each other).
        .target(
            name: "WhereaboutsCalibration",
            dependencies: ["WhereaboutsCore", "WhereaboutsMapFile", "WhereaboutsWire", "WhereaboutsJSON"]
        ),
        // A survey as it is made (the survey tag's readings and the operator's points in, truth lines and progress
        // out) and its accuracy report: `calibrate`'s fit and spatial check, one path for the command and the editor.
        .target(
            name: "WhereaboutsSurvey",
            dependencies: [
                "WhereaboutsCore", "WhereaboutsWire", "WhereaboutsJSON", "WhereaboutsMapFile", "WhereaboutsCalibration",
                "WhereaboutsLocator", "WhereaboutsDrawing",
            ]
        ),
        // The agent's logic (aggregation, batches, outbox, settings) as values in, values out.
        .target(
            name: "WhereaboutsAgent",
            dependencies: [
                "WhereaboutsAdvertising", "WhereaboutsGATT", "WhereaboutsWire", "WhereaboutsCore", "WhereaboutsSession",
                "WhereaboutsSettings",
            ]
        ),
        // One settings system for every executable: flags, then environment, then an env file, then a .conf file.
        // Pure: the shell hands it the arguments, the environment and a function that reads files.
        .target(name: "WhereaboutsSettings"),

        // A live dashboard's state, its Server-Sent Events and its page (HTML, style, and a script that checks every
        // message against the schema the Swift message types write; floors drawn by WhereaboutsDrawing), and the
        // terminal board `whereabouts watch` prints: values in, text out, tested without a socket or a browser.
        .target(
            name: "WhereaboutsDashboard",
            dependencies: ["WhereaboutsCore", "WhereaboutsWire", "WhereaboutsJSON", "WhereaboutsDrawing"]
        ),

        // The map editor behind `whereabouts web --edit`: its page, checks, saving (through a store the shell gives
        // it), floor-plan pictures and the survey's routes (through a desk the shell gives it); values in, values
        // out, tested without a socket, a file or a browser.
        .target(
            name: "WhereaboutsEditor",
            dependencies: ["WhereaboutsCore", "WhereaboutsJSON", "WhereaboutsMapFile", "WhereaboutsSurvey"]),

        // MARK: - C system libraries (module map + header-only shim each)
        .systemLibrary(name: "CMosquitto", pkgConfig: "libmosquitto", providers: [.apt(["libmosquitto-dev"])]),
        .systemLibrary(name: "CBlueZ", pkgConfig: "bluez", providers: [.apt(["libbluetooth-dev"])]),
        .systemLibrary(name: "CLibFuzzer"),

        // MARK: - Adapters (own the C handles, translate C to Swift values)
        // A detached thread for a loop that blocks: the adapters' loops and the HTTP server's.
        .target(name: "DetachedThread"),
        .target(name: "WhereaboutsMQTT", dependencies: ["CMosquitto", "DetachedThread"]),
        .target(
            name: "WhereaboutsHCI",
            dependencies: ["CBlueZ", "WhereaboutsAdvertising", "WhereaboutsGATT", "DetachedThread"]
        ),
        // The agent's radio for the runner: a live scan on a controller, or a btsnoop capture replayed.
        .target(
            name: "WhereaboutsRadio",
            dependencies: [
                "WhereaboutsAgent", "WhereaboutsAdvertising", "WhereaboutsHCI", "WhereaboutsGATT", "WhereaboutsRuntime",
                "WhereaboutsWire", "WhereaboutsCore", "CommandLineSupport",
            ]
        ),
        // A small, strict HTTP/1.1 server over Glibc sockets and poll: GET only, bounded heads, connections and
        // streams; the dashboard's only way to the network (no HTTP package can be fetched here).
        .target(name: "WhereaboutsHTTPServer", dependencies: ["DetachedThread"]),
        // The one loop both services run: broker, source, ticks and signals in, the pipeline's actions out.
        .target(
            name: "WhereaboutsRuntime",
            dependencies: [
                "WhereaboutsSession", "WhereaboutsWire", "WhereaboutsMQTT", "CommandLineSupport", "DetachedThread",
                "WhereaboutsCore", "WhereaboutsHTTPServer",
            ]),

        // MARK: - Shells
        // Logging, files, signals, and the real environment and files behind the settings.
        .target(
            name: "CommandLineSupport", dependencies: ["WhereaboutsSettings", "WhereaboutsMQTT", "WhereaboutsCore"]),
        // The operator's tool's subcommands (map check, sim, replay, evaluate, render, calibrate, watch, web): a
        // library, so that the executable stays wiring; nothing but `whereabouts` imports it.
        .target(
            name: "WhereaboutsTool",
            dependencies: [
                "WhereaboutsCore", "WhereaboutsMapFile", "WhereaboutsJSON", "WhereaboutsWire", "WhereaboutsSimulation",
                "WhereaboutsMQTT", "WhereaboutsCalibration", "WhereaboutsLocator", "WhereaboutsAgent",
                "WhereaboutsAdvertising", "WhereaboutsSession", "WhereaboutsRuntime", "WhereaboutsSettings",
                "WhereaboutsDashboard", "WhereaboutsDrawing", "WhereaboutsHTTPServer", "CommandLineSupport",
                "WhereaboutsEditor", "WhereaboutsSurvey", "DetachedThread",
            ]
        ),
        .executableTarget(name: "whereabouts", dependencies: ["WhereaboutsTool", "CommandLineSupport"]),
        .executableTarget(
            name: "whereabouts-locator",
            dependencies: [
                "WhereaboutsCore", "WhereaboutsMapFile", "WhereaboutsWire", "WhereaboutsLocator", "WhereaboutsMQTT",
                "WhereaboutsRuntime", "WhereaboutsSession", "WhereaboutsSettings", "CommandLineSupport",
            ]
        ),
        .executableTarget(
            name: "whereabouts-agent",
            dependencies: [
                "WhereaboutsAgent", "WhereaboutsAdvertising", "WhereaboutsWire", "WhereaboutsMQTT", "WhereaboutsRadio",
                "WhereaboutsRuntime", "WhereaboutsSession", "WhereaboutsSettings", "CommandLineSupport",
            ]
        ),
        // The benchmarks behind scripts/bench.sh (docs/benchmarks.md); kept out of the operator's tool. A library,
        // so that the executable stays wiring; nothing but `whereabouts-bench` imports it.
        .target(
            name: "WhereaboutsBench",
            dependencies: [
                "WhereaboutsCore", "WhereaboutsMapFile", "WhereaboutsJSON", "WhereaboutsWire", "WhereaboutsAdvertising",
                "WhereaboutsMQTT", "WhereaboutsSettings", "WhereaboutsLocator", "WhereaboutsSession",
                "WhereaboutsRuntime", "CommandLineSupport",
            ]
        ),
        .executableTarget(name: "whereabouts-bench", dependencies: ["WhereaboutsBench", "CommandLineSupport"]),
        // Built with -sanitize=fuzzer by scripts/fuzz-hci.sh; without it, replays corpus files.
        .executableTarget(
            name: "whereabouts-fuzz-hci", dependencies: ["WhereaboutsAdvertising", "WhereaboutsGATT", "CLibFuzzer"]),

        // MARK: - Tests (one target per module; fixtures beside the tests, or in TestFixtures when shared)
        .target(name: "BrokerFixture", path: "Tests/BrokerFixture"),
        // BlueZ's controller emulator (btvirt) in a directory of its own, and an H4 relay that stands in for what
        // it cannot do (real RSSI, extended-scanning bits, a stream of reports, a controller that vanishes).
        .target(name: "ControllerEmulator", dependencies: ["BrokerFixture"], path: "Tests/ControllerEmulator"),
        // A GATT server peripheral of our own (Battery, Device Information, a beacon's configuration) on an emulated
        // controller, for the central's tests: test-only, since nothing shipped serves GATT yet.
        .target(
            name: "GATTPeripheral", dependencies: ["WhereaboutsHCI", "WhereaboutsGATT", "WhereaboutsAdvertising"],
            path: "Tests/GATTPeripheral"),
        // Data files that several test targets read, each kept once with its licence or credit beside it.
        .target(
            name: "TestFixtures", dependencies: ["DetachedThread"], path: "Tests/TestFixtures",
            resources: [.copy("Fixtures")]),
        .testTarget(name: "WhereaboutsJSONTests", dependencies: ["WhereaboutsJSON"]),
        // The engine's tests read the shipped maps through the map file module (a test-only dependency).
        .testTarget(
            name: "WhereaboutsCoreTests",
            dependencies: ["WhereaboutsCore", "WhereaboutsMapFile", "TestFixtures", "DetachedThread"]),
        .testTarget(
            name: "WhereaboutsMapFileTests", dependencies: ["WhereaboutsMapFile", "WhereaboutsCore", "WhereaboutsJSON"]),
        .testTarget(
            name: "WhereaboutsLocatorTests",
            dependencies: ["WhereaboutsLocator", "WhereaboutsMapFile", "WhereaboutsSimulation", "TestFixtures"]
        ),
        .testTarget(name: "WhereaboutsWireTests", dependencies: ["WhereaboutsWire", "TestFixtures"]),
        .testTarget(
            name: "WhereaboutsSessionTests", dependencies: ["WhereaboutsSession", "WhereaboutsWire", "WhereaboutsCore"]),
        .testTarget(
            name: "WhereaboutsAgentTests", dependencies: ["WhereaboutsAgent", "WhereaboutsSettings", "TestFixtures"]),
        .testTarget(name: "WhereaboutsSettingsTests", dependencies: ["WhereaboutsSettings"]),
        .testTarget(
            name: "CommandLineSupportTests",
            dependencies: ["CommandLineSupport", "WhereaboutsSettings", "WhereaboutsCore"]),
        .testTarget(
            name: "WhereaboutsRadioTests",
            dependencies: [
                "WhereaboutsRadio", "WhereaboutsRuntime", "WhereaboutsAgent", "WhereaboutsAdvertising",
                "WhereaboutsCore",
            ]
        ),
        .testTarget(
            name: "WhereaboutsGATTTests",
            dependencies: ["WhereaboutsGATT", "WhereaboutsAdvertising", "WhereaboutsCore"]),
        .testTarget(name: "WhereaboutsAdvertisingTests", dependencies: ["WhereaboutsAdvertising", "TestFixtures"]),
        // The test machines have no Bluetooth controller: the host logic runs against btvirt (BlueZ's emulator) over H4.
        .testTarget(
            name: "WhereaboutsHCITests",
            dependencies: [
                "WhereaboutsHCI", "WhereaboutsAdvertising", "WhereaboutsCore", "WhereaboutsGATT", "ControllerEmulator",
                "GATTPeripheral", "BrokerFixture",
            ]),
        .testTarget(
            name: "WhereaboutsRuntimeTests",
            dependencies: [
                "WhereaboutsRuntime", "WhereaboutsSession", "WhereaboutsWire", "WhereaboutsCore", "WhereaboutsMQTT",
                "CommandLineSupport", "BrokerFixture", "DetachedThread",
            ]
        ),
        .testTarget(
            name: "WhereaboutsSimulationTests",
            dependencies: [
                "WhereaboutsSimulation", "WhereaboutsLocator", "WhereaboutsWire", "WhereaboutsCore",
                "WhereaboutsMapFile", "TestFixtures",
            ],
            // The accuracy baselines, read and re-recorded in place (not from the bundle).
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "WhereaboutsDrawingTests",
            dependencies: [
                "WhereaboutsDrawing", "WhereaboutsCore", "WhereaboutsWire", "WhereaboutsMapFile", "TestFixtures",
            ]
        ),
        .testTarget(
            name: "WhereaboutsCalibrationTests",
            dependencies: [
                "WhereaboutsCalibration", "WhereaboutsSimulation", "WhereaboutsLocator", "WhereaboutsWire",
                "WhereaboutsCore", "WhereaboutsMapFile", "WhereaboutsJSON", "TestFixtures",
            ]
        ),
        .testTarget(
            name: "WhereaboutsSurveyTests",
            dependencies: [
                "WhereaboutsSurvey", "WhereaboutsCalibration", "WhereaboutsWire", "WhereaboutsCore", "WhereaboutsJSON",
                "WhereaboutsMapFile", "WhereaboutsSimulation", "WhereaboutsLocator", "TestFixtures",
            ]
        ),
        .testTarget(name: "WhereaboutsMQTTTests", dependencies: ["WhereaboutsMQTT", "BrokerFixture"]),
        .testTarget(
            name: "WhereaboutsDashboardTests",
            dependencies: [
                "WhereaboutsDashboard", "WhereaboutsWire", "WhereaboutsCore", "WhereaboutsJSON", "WhereaboutsMapFile",
            ]
        ),
        .testTarget(
            name: "WhereaboutsEditorTests",
            dependencies: [
                "WhereaboutsEditor", "WhereaboutsMapFile", "WhereaboutsJSON", "WhereaboutsCore", "WhereaboutsSurvey",
                "WhereaboutsWire",
            ]
        ),
        // Hostile requests against the real server on a free loopback port.
        .testTarget(name: "WhereaboutsHTTPServerTests", dependencies: ["WhereaboutsHTTPServer"]),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "WhereaboutsCore", "WhereaboutsMapFile", "WhereaboutsJSON", "WhereaboutsWire", "WhereaboutsLocator",
                "WhereaboutsMQTT", "WhereaboutsAgent", "WhereaboutsSettings", "BrokerFixture", "TestFixtures",
            ],
            resources: [.copy("Fixtures")]
        ),
        // Runs the built whereabouts-agent against a real mosquitto.
        .testTarget(
            name: "AgentEndToEndTests",
            dependencies: [
                "BrokerFixture", "TestFixtures", "WhereaboutsWire", "WhereaboutsMQTT", "WhereaboutsAdvertising",
                "WhereaboutsCore", "ControllerEmulator", "WhereaboutsSession", "WhereaboutsHCI", "WhereaboutsGATT",
                "GATTPeripheral",
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

for target in package.targets where target.type != .system {
    target.swiftSettings =
        (target.swiftSettings ?? []) + [
            .enableUpcomingFeature("ExistentialAny"),
            .enableUpcomingFeature("InternalImportsByDefault"),
            .enableUpcomingFeature("MemberImportVisibility"),
        ]
    // Pure modules use libm (rounding, log10, pow) without importing Glibc's whole surface.
    target.linkerSettings = (target.linkerSettings ?? []) + [.linkedLibrary("m")]
}
