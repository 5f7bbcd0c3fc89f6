import Foundation
import Testing

/// The fuzz targets build and survive their corpus: 30 s of fuzzing when the build takes under a
/// minute, otherwise a replay of the corpus and the seeds (libFuzzer -runs=0).
@Suite(.serialized) struct FuzzTests {
    let script = repoRoot.appendingPathComponent("scripts/fuzz").path

    @Test func fuzzTargetsSurvive() throws {
        let build = try runProcess(script, ["--build"], in: repoRoot, timeout: 900)
        try #require(build.status == 0, "scripts/fuzz --build: \(build.stderr)")
        if build.seconds < 60 {
            let r = try runProcess(script, ["30"], in: repoRoot, timeout: 300)
            #expect(r.status == 0, "scripts/fuzz 30 found a crash:\n\(r.stdout)\n\(r.stderr)")
        } else {
            let r = try runProcess(script, ["--replay"], in: repoRoot, timeout: 600)
            #expect(r.status == 0, "scripts/fuzz --replay:\n\(r.stdout)\n\(r.stderr)")
        }
    }
}
