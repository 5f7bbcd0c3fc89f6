import Testing
@testable import ObjectGraph

@Suite struct ModelMergeTests {
    @Test func mergingTwoModulesWithPlaceholdersResolvesBothSides() throws {
        let model = try ObjectModel(merging: [Music.songs, Music.artists])
        let song = try #require(model.entity("Song"))
        let artist = try #require(model.entity("Artist"))
        #expect(model.entities.map(\.name).sorted() == ["Artist", "Song"])

        let toArtist = try #require(song.relationship("artist"))
        #expect(!toArtist.isToMany && toArtist.deleteRule == .nullify && toArtist.destination == "Artist")
        #expect(toArtist.storesForeignKey)
        let toSongs = try #require(artist.relationship("songs"))
        #expect(toSongs.isToMany && toSongs.deleteRule == .cascade && toSongs.inverse == "artist")
        #expect(model.inverse(of: toSongs)?.name == "artist")

        #expect(song.module == "Songs" && artist.module == "Artists")
        #expect(song.attributes.map { "\($0.name)@\($0.module)" } == ["title@Songs", "duration@Songs"])
        #expect(song.relationships.map { "\($0.name)@\($0.module)" } == ["artist@Songs"])
        #expect(artist.attributes.map { "\($0.name)@\($0.module)" } == ["name@Artists"])
        #expect(artist.relationships.map { "\($0.name)@\($0.module)" } == ["songs@Artists"])
    }

    @Test func aPlaceholderAddsARelationshipWhoseInverseOnlyItsModuleKnows() throws {
        let model = try ObjectModel(merging: [Music.songs, Music.artists, Music.pictures])
        let artist = try #require(model.entity("Artist"))
        let pictures = try #require(artist.relationship("pictures"))
        #expect(pictures.module == "Pictures" && pictures.isToMany && pictures.deleteRule == .cascade)
        #expect(model.inverse(of: pictures)?.name == "artist")
        #expect(model.entity("Picture")?.relationship("artist")?.module == "Pictures")
        #expect(artist.module == "Artists")
    }

    @Test func aPlaceholderContributesLocalAttributesToTheRealEntity() throws {
        let model = try ObjectModel(merging: [Music.songs, Music.artists, Music.pictures])
        let artist = try #require(model.entity("Artist"))
        let count = try #require(artist.attribute("pictureCount"))
        #expect(count.module == "Pictures" && count.type == .integer && count.defaultValue == .integer(0))
        #expect(artist.attribute("name")?.module == "Artists")
        // The attribute gets a column and its default.
        let store = try Store.inMemory(model: model)
        let id = try store.write { try $0.insert("Artist", ["name": .string("Nina")]) }.result
        #expect(try store.read { try $0.object(id)?["pictureCount"] } == .integer(0))
    }

    @Test func everyProblemIsReportedAtOnceNamingBothModules() throws {
        let a = ModelModule("Alpha", entities: [
            EntityDescription("Show", attributes: [AttributeDescription("title", .string)]),
            EntityDescription("Channel", attributes: [AttributeDescription("name", .string)], relationships: [
                .toMany("shows", "Episode", inverse: "channel", deleteRule: .cascade),
            ]),
            .placeholder("Ghost"),
            EntityDescription("Clip", attributes: [], relationships: [
                .toOne("station", "Station", inverse: "clips"),
            ]),
            EntityDescription("Studio", relationships: [
                .toMany("films", "Film", inverse: "maker", deleteRule: .nullify),
            ]),
        ])
        let b = ModelModule("Beta", entities: [
            EntityDescription("Show", attributes: [AttributeDescription("title", .string)]),
            .placeholder("Channel", attributes: [AttributeDescription("name", .integer)]),
            .placeholder("Ghost"),
            .placeholder("Station"),
            EntityDescription("Movie", parent: "Ghost"),
            EntityDescription("Film", relationships: [.toOne("studio", "Studio", inverse: "films")]),
        ])
        let c = ModelModule("Gamma", entities: [
            EntityDescription("Episode", relationships: [.toOne("channel", "Channel", inverse: "episodes")]),
        ])
        let error = #expect(throws: ModelError.self) { try ObjectModel(merging: [a, b, c]) }
        let problems = try #require(error?.problems)
        func problem(_ kind: ModelProblem.Kind, mentioning text: String) -> ModelProblem? {
            problems.first { $0.kind == kind && $0.description.contains(text) }
        }
        let expected: [(ModelProblem.Kind, String, [String])] = [
            (.nameCollision, "Show", ["Alpha", "Beta"]),
            (.conflictingAttribute, "Channel.name", ["Alpha", "Beta"]),
            (.placeholderWithoutEntity, "Ghost", ["Alpha", "Beta"]),
            (.invalidInheritance, "Movie", ["Alpha", "Beta"]),
            (.unresolvedDestination, "Clip.station", ["Alpha", "Beta"]),
            (.inverseMismatch, "Channel.shows", ["Alpha", "Gamma"]),
            (.inverseMismatch, "Studio.films", ["Alpha", "Beta"]),
        ]
        for (kind, text, modules) in expected {
            let found = problem(kind, mentioning: text)
            #expect(found != nil, "no \(kind.rawValue) problem about \(text) in:\n\(error!)")
            for module in modules {
                #expect(found?.modules.contains(module) == true, "\(text): modules \(found?.modules ?? [])")
                #expect(found?.description.contains("'\(module)'") == true, "\(found?.description ?? text) does not name \(module)")
            }
        }
        #expect(error!.description.contains("\(problems.count) problems"))
    }

    @Test func subEntitiesInheritAttributesIncludingThoseMergedIntoTheParent() throws {
        let films = ModelModule("Films", entities: [
            EntityDescription("Movie", parent: "Programme", attributes: [AttributeDescription("director", .string)]),
            .placeholder("Programme", attributes: [AttributeDescription("rating", .string)]),
        ])
        // The sub-entity's module comes first: the parent is resolved after the merge.
        let model = try ObjectModel(merging: [films, Guide.module])
        let movie = try #require(model.entity("Movie"))
        #expect(movie.parent == "Programme" && movie.rootName == "Programme")
        #expect(movie.attributes.map(\.name) == ["title", "start", "rating", "director"])
        #expect(movie.attribute("title")?.declaringEntity == "Programme")
        #expect(movie.attribute("title")?.module == "Guide")
        #expect(movie.attribute("rating")?.module == "Films")
        #expect(movie.attribute("director")?.module == "Films")
        #expect(movie.relationship("channel")?.destination == "Channel")
        #expect(model.entity("Programme")?.subentities == ["Movie"])
        #expect(model.entity("Programme")?.descendants == ["Programme", "Movie"])

        let store = try Store.inMemory(model: model)
        try store.write { (context: ObjectContext) throws in
            let channel = try context.insert("Channel", ["id": .string("bbc1")])
            try context.insert("Programme", ["title": .string("News")], related: ["channel": channel])
            try context.insert("Movie", ["title": .string("Heat"), "director": .string("Mann")], related: ["channel": channel])
        }
        try store.read { (context: ObjectContext) throws in
            let all = try context.fetchAll("Programme", orderBy: [SortKey("title")])
            #expect(all.map(\.id.entity) == ["Movie", "Programme"])
            #expect(all.map { $0["title"] } == [.string("Heat"), .string("News")])
            let movies = try context.fetchAll("Movie")
            #expect(movies.map(\.id.entity) == ["Movie"])
            #expect(movies.first?["director"] == .string("Mann"))
            #expect(try context.count("Programme") == 2 && context.count("Movie") == 1)
            let channel = try #require(try context.first("Channel"))
            #expect(try context.members(of: channel.id, "programmes").count == 2)
        }
    }
}
