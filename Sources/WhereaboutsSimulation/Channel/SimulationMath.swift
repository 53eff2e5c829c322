#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

// libm, for the few functions the standard library lacks. The package links `m` for every target.

/// Base-10 logarithm.
@inline(__always) func logarithm10(_ x: Double) -> Double { log10(x) }

/// e to the power `x`.
@inline(__always) func exponential(_ x: Double) -> Double { exp(x) }

extension Double {
    /// This value with `decimals` decimal places at most.
    func rounded(toDecimals decimals: Int) -> Double {
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        return (self * scale).rounded() / scale
    }
}
