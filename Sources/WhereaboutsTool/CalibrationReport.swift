import WhereaboutsCalibration
import WhereaboutsSurvey

/// What `whereabouts calibrate` prints and draws; the text and drawing live in WhereaboutsSurvey
/// (``CalibrationReportText``), where the survey's report makes the same.
enum CalibrationReport {
    /// The spatial check's table, the per-agent table, the tags and the agents that kept their values.
    static func text(_ result: CalibrationResult, check: SpatialReport) -> String {
        CalibrationReportText.text(result, check: check)
    }

    /// The coverage report: the floor, the surveyed positions and each area's held-out median error.
    static func coverageSVG(_ calibration: GuidedCalibration, check: SpatialReport, scale: Double = 60) -> String {
        CalibrationReportText.coverageSVG(calibration, check: check, scale: scale)
    }
}
