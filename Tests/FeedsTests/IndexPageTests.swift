@testable import Feeds
import Testing

/// index.html escapes what feeds bring (a channel's name, a file name) as the server's pages do:
/// one escaping for every page (`HTMLText`).
@Suite struct IndexPageTests {
    @Test func titlesAndLinksAreEscapedAsOnTheServersPages() {
        let entry = FeedExporter.FeedEntry(file: "a&b\".ics", title: "<b>Tom's</b> & \"Jerry\"\u{1}", events: 3, bytes: 1025, lastChange: 0)
        let page = IndexPage.render([entry], baseURL: "https://tv.example/x?a=1&b=2")
        #expect(page.contains("<td>&lt;b&gt;Tom&#39;s&lt;/b&gt; &amp; &quot;Jerry&quot;\u{FFFD}</td>"))
        #expect(page.contains("href=\"a&amp;b&quot;.ics\""))
        #expect(page.contains("<a href=\"webcal://tv.example/x?a=1&amp;b=2/a&amp;b&quot;.ics\">subscribe (webcal)</a>"))
        #expect(!page.contains("<b>") && !page.contains("\u{1}"))
        #expect(page.contains("<td>2 KiB</td>"))
    }
}
