/// The pages' look, one style sheet (`/style.css`).
extension HTML {
    /// The style sheet: served as a file so that the CSP needs no `unsafe-inline`. The guide's
    /// grid has a column a minute (`GuidePages.gridMinutes`): a block spans its minutes (`sN`) and
    /// the now line sits at its minute (`nK`), classes generated here since no style is inline.
    static let styleSheet: String = baseStyle + (1...GuidePages.gridMinutes).map { ".s\($0){grid-column:span \($0)}" }.joined()
        + "\n" + (0..<GuidePages.gridMinutes).map { ".n\($0){left:calc(11rem + (100% - 11rem) * \($0) / \(GuidePages.gridMinutes))}" }.joined()
        + "\n" + narrowStyle

    static let baseStyle = """
        body{font:16px/1.45 system-ui,sans-serif;margin:0;color:#111;background:#fafafa}
        header{background:#234;padding:.5em 1em}header nav{display:flex;flex-wrap:wrap;gap:.4em 1em;align-items:center}
        header a,header button{color:#fff}header form{display:inline-flex;gap:.3em}header input[type=search]{width:10em;max-width:40vw}
        header form.inline button,header .search button{background:none;border:1px solid #fff;border-radius:3px}
        main{padding:0 1em 2em;max-width:60em}main.wide{max-width:none}h1{font-size:1.4em}
        .scroll{overflow-x:auto;max-width:100%}table{border-collapse:collapse}
        td,th{border-bottom:1px solid #ddd;padding:.3em .5em;text-align:left;vertical-align:top;overflow-wrap:anywhere}
        .time{font-variant-numeric:tabular-nums;color:#555;margin-right:.5em}
        .links a{margin-right:1em;font-size:.95em}.error{color:#a00;font-weight:bold}.notice{color:#060}
        label{display:block;margin:.4em 0}input[type=text],input[type=number]{width:100%;max-width:30em;box-sizing:border-box}
        .pager a,.pager span,.pager strong{margin-right:1em}form.inline{display:inline}
        .sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
        a.title{font-weight:600}.sub{color:#444}.onnow{color:#b00}
        ol.day,ul.airings,ul.subscriptions{list-style:none;padding:0}ol.day li,ul.airings li{padding:.35em 0;border-bottom:1px solid #e4e4e4}
        ol.day li.now{background:#eaf1ff}
        .subtitle{font-size:1.15em;color:#333;margin-top:-.4em}.programme{display:flex;flex-wrap:wrap;gap:1em;align-items:flex-start}
        .poster{max-width:min(100%,18em);height:auto;border-radius:4px}.desc{max-width:40em}
        dl.facts,dl.credits{display:grid;grid-template-columns:max-content 1fr;gap:.25em 1em;margin:0}dt{font-weight:600;color:#444}dd{margin:0}
        .flag{background:#234;color:#fff;border-radius:3px;padding:0 .4em;font-size:.85em}a.subscribe{font-weight:600}
        .logo{width:40px;height:30px;object-fit:contain;vertical-align:middle}dd .logo{margin-right:.4em}
        .kind{color:#666;margin:-.6em 0 .6em;font-size:.9em}div.notice{border:1px solid #9c9;background:#f3fbf3;padding:0 .8em;margin:.6em 0}
        table.list td{max-width:22em;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}table.list th{white-space:nowrap;overflow-wrap:normal}
        details{margin:.8em 0}summary{cursor:pointer;color:#235}
        .grid{position:relative;border-top:1px solid #ccc;margin-top:.5em}
        .ticks,.row{display:flex;border-bottom:1px solid #ddd}.ticks .corner{flex:0 0 11rem}
        .ticks ol,.slots{flex:1;min-width:0;display:grid;grid-template-columns:repeat(\(GuidePages.gridMinutes),minmax(0,1fr));list-style:none;margin:0;padding:0}
        .ticks li{font-size:.8em;color:#555;border-left:1px solid #bbb;padding-left:.3em;white-space:nowrap;overflow:hidden}
        .row .ch{flex:0 0 11rem;width:11rem;box-sizing:border-box;font-size:.95em;margin:0;padding:.35em .5em;background:#fff;border-right:1px solid #ddd;overflow:hidden}
        .ch a{color:#111;text-decoration:none}.ch .name{font-weight:600}.ch .logo{margin-right:.4em}.fav{color:#b80}
        .ch a.sub{display:block;font-size:.75em;font-weight:normal;color:#235;text-decoration:underline}
        .row .empty{margin:0;padding:.5em;color:#666}
        .slots li{overflow:hidden;white-space:nowrap;text-overflow:ellipsis;padding:.35em .4em;border-left:1px solid #fff;background:#e8edf4;font-size:.9em;box-sizing:border-box}
        .slots li.now{background:#d3e2ff}.slots li.gap{background:none}.slots .time{display:block;font-size:.8em}.slots .sub{display:none}
        .nowline{position:absolute;top:0;bottom:0;width:2px;background:#c00;z-index:1;pointer-events:none}

        """

    /// A phone: each channel a list of what is on, no grid, no time scale.
    static let narrowStyle = """
        @media (max-width:40em){main{padding:0 .6em 2em}.ticks,.nowline,.slots li.gap{display:none}
        .row{display:block;padding:.3em 0}.row .ch{width:auto;border:0;background:none;padding:.3em 0}
        .slots{display:block}.slots li{white-space:normal;border:0;border-top:1px solid #e4e4e4;background:none;padding:.3em 0}
        .slots li.now{background:#eaf1ff}.slots .time{display:inline}.slots .sub{display:inline}
        .ch a.sub{display:inline;margin-left:1em}dl.facts,dl.credits{grid-template-columns:1fr}dd{margin-bottom:.4em}
        table:not(.list) tr,table:not(.list) th,table:not(.list) td{display:block}table:not(.list) th{border:0;padding-bottom:0}}

        """
}
