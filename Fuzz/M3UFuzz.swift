// libFuzzer entry point for the M3U playlist reader (Sources/Playlists/M3UPlaylist.swift).
// Compiled by scripts/fuzz together with that file as module Playlists: no `import Playlists`.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    guard let playlist = try? M3UPlaylist(bytes: bytes, file: "fuzz.m3u") else { return 0 }
    // Invariants: entries in line order, inside the file, with shifts within the bound and fields within their limit.
    var lastLine = 0
    for entry in playlist.entries {
        precondition(entry.line > lastLine, "entries out of order")
        lastLine = entry.line
        precondition(entry.line <= size + 1, "line \(entry.line) beyond the input")
        precondition(abs(entry.shift) <= Int64(M3UPlaylist.maxShiftHours) * 3600, "shift \(entry.shift)")
        for field in [entry.title, entry.tvgID ?? "", entry.tvgName ?? "", entry.tvgLogo ?? "", entry.groupTitle ?? "", entry.url ?? ""] {
            precondition(field.utf8.count <= M3UPlaylist.maxFieldBytes * 3, "a field of \(field.utf8.count) bytes")
        }
    }
    precondition(playlist.entries.count <= M3UPlaylist.maxEntries)
    precondition(playlist.warnings.count <= 1000)
    // The shift grammar alone, on the raw text.
    if let seconds = M3UPlaylist.shiftSeconds(String(decoding: bytes.prefix(32), as: UTF8.self)) {
        precondition(abs(seconds) <= Int64(M3UPlaylist.maxShiftHours) * 3600)
    }
    return 0
}
