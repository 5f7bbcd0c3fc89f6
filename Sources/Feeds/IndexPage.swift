import ObjectGraph
import Primitives

/// index.html: every feed with its programme count, size, last change and subscribe links.
enum IndexPage {
    static func render(_ entries: [FeedExporter.FeedEntry], baseURL: String?) -> String {
        var rows = ""
        for e in entries {
            let href = HTMLText.escape(percentPath(e.file))
            var links = "<a href=\"\(href)\">download</a>"
            if let base = baseURL?.trimmingSuffix("/") {
                let https = base + "/" + percentPath(e.file)
                let webcal = https.replacingPrefix("https://", with: "webcal://").replacingPrefix("http://", with: "webcal://")
                links = "<a href=\"\(HTMLText.escape(webcal))\">subscribe (webcal)</a> · <a href=\"\(HTMLText.escape(https))\">https</a> · " + links
            }
            rows += "<tr><td>\(HTMLText.escape(e.title))</td><td>\(e.events)</td><td>\(e.bytes / 1024 + (e.bytes % 1024 > 0 ? 1 : 0)) KiB</td><td>\(e.lastChange > 0 ? UTCTime.iso8601(e.lastChange) : "")</td><td>\(links)</td></tr>\n"
        }
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>TV feeds</title>
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{padding:.3em .8em;border-bottom:1px solid #ddd;text-align:left}</style>
            </head><body>
            <h1>TV feeds</h1>
            <p>\(entries.count) calendar feeds. Subscribe to a feed from Google Calendar, Apple Calendar, Outlook, Thunderbird or Nextcloud with its link.</p>
            <table>
            <tr><th>Feed</th><th>Programmes</th><th>Size</th><th>Last change (UTC)</th><th>Links</th></tr>
            \(rows)</table>
            </body></html>

            """
    }

    /// File names may contain '%' (from the id encoding): escape it again for URLs.
    static func percentPath(_ file: String) -> String {
        var out = ""
        for c in file { out += c == "%" ? "%25" : String(c) }
        return out
    }
}

extension String {
    func trimmingSuffix(_ suffix: String) -> String { hasSuffix(suffix) ? String(dropLast(suffix.count)) : self }
    func replacingPrefix(_ prefix: String, with replacement: String) -> String {
        hasPrefix(prefix) ? replacement + dropFirst(prefix.count) : self
    }
}
