def log = new File(basedir, 'build.log').text
assert log.contains('LockHygiene scan: 0 finding(s)')
assert log.contains('LockHygiene verify: no violations')
// the test JVM wrote the report and the bed really ran
assert new File(basedir, 'target/lockhygiene').isDirectory()
assert log.contains('Tests run: 1, Failures: 0, Errors: 0')
