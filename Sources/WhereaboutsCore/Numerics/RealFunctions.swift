#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

// libm, for the few functions the standard library lacks (the package links `m` for every target). Public so that
// the other pure modules use these rather than importing the C library themselves.

/// 10 to the power `x`.
@inline(__always) public func pow10(_ x: Double) -> Double { exp(x * 2.302_585_092_994_046) }

/// Base-10 logarithm.
@inline(__always) public func logarithm10(_ x: Double) -> Double { log10(x) }

/// e to the power `x`.
@inline(__always) public func exponential(_ x: Double) -> Double { exp(x) }

/// Natural logarithm.
@inline(__always) public func naturalLog(_ x: Double) -> Double { log(x) }

/// Cosine.
@inline(__always) public func cosine(_ x: Double) -> Double { cos(x) }

extension Double {
    /// This value with `decimals` decimal places at most.
    public func rounded(toDecimals decimals: Int) -> Double {
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        return (self * scale).rounded() / scale
    }
}

/// e to the power `x`, in single precision (the grid filter's per-cell weights).
@inline(__always) public func exponential(_ x: Float) -> Float { expf(x) }

/// The complementary error function.
@inline(__always) public func complementaryErrorFunction(_ x: Double) -> Double { erfc(x) }
