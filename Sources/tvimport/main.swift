import TVImportCommands

TVImport.main()
