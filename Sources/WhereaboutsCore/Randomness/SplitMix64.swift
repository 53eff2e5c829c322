/// A small, fast, seeded random number generator (SplitMix64), so that simulations and tests repeat exactly.
///
/// Core never uses the global generator: randomness is an input, and this is the one the project threads through.
public struct SplitMix64: RandomNumberGenerator, Sendable, Hashable {
    private var state: UInt64

    /// Starts the sequence at `seed`.
    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension RandomNumberGenerator {
    /// A standard normal sample (mean 0, standard deviation 1), by the Box–Muller transform. Inlinable, so that a
    /// caller with a concrete generator gets it specialised (unspecialised, it was over half of the bench's load
    /// generation).
    @inlinable public mutating func nextGaussian() -> Double {
        let u1 = Double.random(in: Double.ulpOfOne..<1, using: &self)
        let u2 = Double.random(in: 0..<1, using: &self)
        return (-2 * naturalLog(u1)).squareRoot() * cosine(2 * Double.pi * u2)
    }
}
