import CommandLineSupport
import Testing
import WhereaboutsCore
import WhereaboutsSettings

@Suite("--positioning and --lag")
struct TrackerSettingsTests {
    static let table: [Setting] = [
        .value("positioning", "MODE", "grid or trilateration", key: .flagOnly),
        .value("lag", "S", "the grid filter's fixed lag", key: .flagOnly),
    ]

    /// The engine configuration the flags make, or the refusal's message.
    func apply(_ arguments: [String]) -> Result<LocatorEngine.Configuration, SettingsError> {
        do throws(SettingsError) {
            let settings = try Settings(
                arguments: arguments, table: Self.table, environment: [:], configFile: nil, positionalLimit: 0
            ) { _ in .missing }
            var configuration = LocatorEngine.Configuration()
            try settings.applyTracker(to: &configuration)
            return .success(configuration)
        } catch {
            return .failure(error)
        }
    }

    @Test("grid is the default, and grid and trilateration are taken")
    func taken() throws {
        #expect(try apply([]).get().positioning == .grid)
        #expect(try apply(["--positioning", "grid", "--lag", "1"]).get().grid.lag == 1)
        #expect(try apply(["--positioning", "trilateration"]).get().positioning == .trilateration)
    }

    @Test("automatic, which meant grid, is refused with a message that says to use grid")
    func automaticRefused() {
        guard case .failure(.invalid(let message)) = apply(["--positioning", "automatic"]) else {
            Issue.record("--positioning automatic was taken")
            return
        }
        #expect(message.contains("automatic") && message.contains("grid"), "\(message)")
    }

    @Test("an unknown tracker is refused, naming the two there are")
    func unknownRefused() {
        guard case .failure(.invalid(let message)) = apply(["--positioning", "kalman"]) else {
            Issue.record("--positioning kalman was taken")
            return
        }
        #expect(message.contains("grid or trilateration"), "\(message)")
    }
}
