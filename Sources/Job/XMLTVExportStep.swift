import Foundation
import ObjectGraph
import XMLTVExport

/// The XMLTV export as a step of `run` and `export`: one line for the report.
enum XMLTVExportStep {
    /// Writes the file; a failure is exit 73 (the previous file stays as it was, whole).
    static func run(store: Store, path: String) throws -> String {
        do {
            let report = try XMLTVExporter(store: store).export(to: path)
            return report.written
                ? "xmltv: \(path) written (\(report.channels) channels, \(report.programmes) programmes)"
                : "xmltv: nothing changed, \(path) left as it was"
        } catch {
            throw JobError(.cannotCreate, "XMLTV export to \(path) failed: \(error)")
        }
    }
}
