// libFuzzer entry point for the streaming XMLTV reader (and the per-channel normaliser behind it).
// Compiled by scripts/fuzz together with Sources/XMLTV/*.swift as module XMLTV: no `import XMLTV`.
// XMLTVReader only reads from a path, so each input goes to one file on tmpfs, rewritten per run.
#if canImport(Glibc)
import Glibc
#endif

private let inputPath: String = {
    let dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
    return "\(dir)/xmltv-fuzz-\(getpid()).xml"
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let file = fopen(inputPath, "wb") else { return 0 }
    if size > 0 { fwrite(data, 1, size, file) }
    fclose(file)

    // A small warning cap exercises the suppression path too.
    guard let reader = try? XMLTVReader(path: inputPath, options: XMLTVReaderOptions(maxWarnings: 8)) else { return 0 }
    var byChannel: [String: [XMLTVProgramme]] = [:]
    var items = 0
    do {
        while let item = try reader.next() {
            items += 1
            if case .programme(let p) = item { byChannel[p.channel, default: []].append(p) }
        }
        // A second call after the end must keep answering nil.
        if try reader.next() != nil { fatalError("XMLTVReader.next() returned an item after the end") }
    } catch {
        // Malformed input: the reader must keep failing with the same error.
        do {
            _ = try reader.next()
            fatalError("XMLTVReader.next() succeeded after throwing \(error)")
        } catch {}
        return 0
    }
    _ = reader.bytesRead
    for (channel, programmes) in byChannel {
        let (normalised, _) = ScheduleNormaliser.normalise(programmes, channel: channel)
        // Invariants of the normaliser: sorted by (start, clump), unique, stops after starts.
        for (a, b) in zip(normalised, normalised.dropFirst()) {
            precondition((a.start, a.clumpIndex) < (b.start, b.clumpIndex), "normaliser output not sorted/unique")
        }
        for p in normalised {
            if let stop = p.stop { precondition(stop >= p.start, "normalised stop \(stop) < start \(p.start)") }
            _ = XMLTVTime.format(p.start)
        }
    }
    _ = items
    return 0
}
