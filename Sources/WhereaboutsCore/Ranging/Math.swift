#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// 10 to the power `x`.
@inline(__always) func pow10(_ x: Double) -> Double { exp(x * 2.302_585_092_994_046) }

/// Base-10 logarithm.
@inline(__always) func log10(_ x: Double) -> Double { log(x) / 2.302_585_092_994_046 }

/// e to the power `x`.
@inline(__always) func exponential(_ x: Double) -> Double { exp(x) }

/// Natural logarithm.
@inline(__always) func naturalLog(_ x: Double) -> Double { log(x) }

/// Cosine.
@inline(__always) func cosine(_ x: Double) -> Double { cos(x) }
