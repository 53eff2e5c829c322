/// The version the executables report (the metrics endpoint's `whereabouts_build_info`).
///
/// One constant for every executable, changed by hand at a release. SwiftPM has no way to pass a string in at build
/// time, so the Debian packages' own version (scripts/package.sh, `0.N` by the commit count) is not this one.
public enum BuildVersion {
    /// The release these sources are.
    public static let current = "0.1.0"
}
