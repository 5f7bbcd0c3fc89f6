// Command lines parsed in process, checked as swift-argument-parser checks its own commands
// (its AssertParse, AssertParseCommand, AssertErrorMessage and AssertHelp). Those helpers live in
// its ArgumentParserTestHelpers, a target and not a product, which another package cannot import:
// these are the same checks, written for swift-testing.
// TestSupport is a plain target, so `swift build -c release` (scripts/setup, scripts/bench) builds it
// too, where swift-testing is not there: these helpers exist only where tests are built.
#if canImport(Testing)
import ArgumentParser
import Testing

/// Parses `arguments` as `root` does (subcommands, the default subcommand, `validate()`), expects
/// a `Command`, and hands it to `check` for its values.
///
///     expectParse(TVImport.self, ["import", "--dry-run", "a.xml"], as: TVImport.Import.self) { command in
///         #expect(command.flags.dryRun)
///     }
public func expectParse<Root: ParsableCommand, Command: ParsableCommand>(
    _ root: Root.Type, _ arguments: [String], as command: Command.Type,
    sourceLocation: SourceLocation = #_sourceLocation, _ check: (Command) throws -> Void = { _ in }
) rethrows {
    let parsed: any ParsableCommand
    do {
        parsed = try root.parseAsRoot(arguments)
    } catch {
        Issue.record("\(arguments) did not parse: \(root.fullMessage(for: error))", sourceLocation: sourceLocation)
        return
    }
    guard let typed = parsed as? Command else {
        Issue.record("\(arguments) parsed as \(type(of: parsed)), not \(Command.self)", sourceLocation: sourceLocation)
        return
    }
    try check(typed)
}

/// Parses `arguments` as `Arguments` alone (an `@OptionGroup`'s type) and hands the values to `check`.
public func expectParse<Arguments: ParsableArguments>(
    _ type: Arguments.Type, _ arguments: [String],
    sourceLocation: SourceLocation = #_sourceLocation, _ check: (Arguments) throws -> Void
) rethrows {
    let parsed: Arguments
    do {
        parsed = try type.parse(arguments)
    } catch {
        Issue.record("\(arguments) did not parse: \(type.fullMessage(for: error))", sourceLocation: sourceLocation)
        return
    }
    try check(parsed)
}

/// Expects `arguments` to be refused by `root`'s parser with `message` (what follows "Error: " on
/// standard error) and `exitCode` (64, EX_USAGE, for every usage error).
public func expectParseError<Root: ParsableCommand>(
    _ root: Root.Type, _ arguments: [String], message: String, exitCode: Int32 = 64,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    do {
        let parsed = try root.parseAsRoot(arguments)
        Issue.record("\(arguments) parsed as \(type(of: parsed)); expected the error \"\(message)\"", sourceLocation: sourceLocation)
    } catch {
        #expect(root.message(for: error) == message, sourceLocation: sourceLocation)
        #expect(root.exitCode(for: error).rawValue == exitCode, sourceLocation: sourceLocation)
    }
}

/// What parsing `arguments` ends with when it ends the program cleanly (`--version`): the text
/// printed and the exit code, or nil (recorded as an issue) when it parses as a command. (`--help`
/// parses as the parser's own help command; check help text with `expectHelp` or `helpMessage`.)
public func cleanExit<Root: ParsableCommand>(
    _ root: Root.Type, _ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation
) -> (output: String, exitCode: Int32)? {
    do {
        let parsed = try root.parseAsRoot(arguments)
        Issue.record("\(arguments) parsed as \(type(of: parsed)); expected a clean exit", sourceLocation: sourceLocation)
        return nil
    } catch {
        return (root.fullMessage(for: error), root.exitCode(for: error).rawValue)
    }
}

/// Expects the help of `command` (a subcommand of `root`, or `root` itself) at `columns` columns
/// to be `expected`, line by line so that a difference names its line.
public func expectHelp<Root: ParsableCommand>(
    _ root: Root.Type, for command: any ParsableCommand.Type, columns: Int = 80, equals expected: String,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let actual = root.helpMessage(for: command, columns: columns)
    let actualLines = actual.trimmingTrailingNewlines.split(separator: "\n", omittingEmptySubsequences: false)
    let expectedLines = expected.trimmingTrailingNewlines.split(separator: "\n", omittingEmptySubsequences: false)
    for (index, (got, want)) in zip(actualLines, expectedLines).enumerated() where got != want {
        Issue.record("help of \(command), line \(index + 1): \"\(got)\", expected \"\(want)\"", sourceLocation: sourceLocation)
        return
    }
    #expect(actualLines.count == expectedLines.count, "help of \(command):\n\(actual)", sourceLocation: sourceLocation)
}

private extension String {
    var trimmingTrailingNewlines: Substring {
        var text = self[...]
        while text.last == "\n" { text = text.dropLast() }
        return text
    }
}
#endif
