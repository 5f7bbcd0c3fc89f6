import Feeds
import Foundation
import Hummingbird
import Job
import NIOCore
import ObjectGraph
import Primitives

/// `/shows/SLUG.ics`: the calendar of one show (`ShowFeed`), every upcoming airing of one exact
/// title on the shown channels. The exporter writes it as `show~SLUG.ics` in the feed directory
/// once someone has subscribed (or the config names it), and it is served from there as any feed
/// is (ETag, 304, gzip). The first request of a show not written yet finds its title, records the
/// subscription (`ShowSubscriptions`), writes the file and has the outputs refreshed, so that
/// every later change of the guide keeps it current and index.html lists it.
struct ShowPages: Sendable {
    let state: ServeState
    let routes: Routes
    static let subscribing = NSLock()

    func show(_ request: Request) async throws -> Response {
        guard let slug = RequestInput.showSlug(fromRawPath: Routes.rest(of: request, after: 1)) else {
            return Pages.error(.notFound, "A show's calendar is /shows/SLUG.ics, as its programme page links to it.")
        }
        let file = ShowFeed.fileName(forSlug: slug)
        if let response = try await routes.feedFile(file, request) { return response }
        let now = Int64(Date().timeIntervalSince1970)
        let options = exportOptions(now: now)
        // A slug no title still to come has costs no read of the programmes.
        let title = try await state.upcomingTitles.reading(database: state.options.database, now: now, reads: state.reads).title(forSlug: slug)
        var found: (title: String, bytes: [UInt8])?
        if let title {
            found = try await state.reads.read { context in
                (title, ShowFeed.render(title: title, events: try ShowFeed.events(title: title, now: now, options: options, context: context), options: options))
            }
        }
        guard let (title, bytes) = found else {
            return Pages.error(.notFound, "No programme still to come has this title: the show's calendar starts with its next airing in the guide.")
        }
        let directory = state.options.feedsDirectory
        let written = (try? await BlockingWork.run { () -> Bool in
            // One subscription at a time: two first requests of two shows must not each write
            // the list without the other's.
            try Self.subscribing.withLock {
                guard try ShowSubscriptions.add(title, in: directory) || !FileManager.default.fileExists(atPath: directory + "/" + file) else { return true }
                try DurableFile.replace(directory + "/" + file, with: bytes)
                return true
            }
        }) ?? false
        if written {
            // The index lists it and the bucket gets it with the next export: started now, not waited for.
            let model = ModelPages(state: state)
            Task.detached { _ = await model.refreshOutputs() }
            if let response = try await routes.feedFile(file, request) { return response }
        }
        return Response(status: .ok, headers: [.contentType: "text/calendar; charset=utf-8", .cacheControl: "no-cache"],
                        body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// The export options of the feeds beside which the show's calendar is written (the UID
    /// domain above all: a show's events have the UIDs of the channel feeds' events).
    func exportOptions(now: Int64) -> ExportOptions {
        if let config = state.options.config ?? LastRunOutputs.config(forDatabase: state.options.database) {
            return config.exportOptions(output: state.options.feedsDirectory, now: now)
        }
        var options = ExportOptions(outputDirectory: state.options.feedsDirectory)
        options.now = now
        return options
    }
}
