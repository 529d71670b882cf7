// the build failed (invoker.properties); it failed for the right reason, and the SARIF file holds both calls
def log = new File(basedir, 'build.log').text
assert log.contains('finding(s) fail the build')
assert log.contains('src/main/java/app/Jobs.java:4:')
def sarif = new File(basedir, 'target/lockhygiene/scan.sarif').text
assert sarif.contains('"version":"2.1.0"')
assert sarif.count('"ruleId":"session-advisory-lock"') == 2
