def log = new File(basedir, 'build.log').text
// the test itself passed; the build failed on the report
assert log.contains('Tests run: 1, Failures: 0, Errors: 0')
assert log.contains('advisory-lock violation(s): 1 leaked lock(s) released')
assert log.contains('LEAK_RELEASED')
assert log.contains('4242')
assert log.contains('at app.JobsIT.theJobForgetsToUnlock')
def report = new File(basedir, 'target/lockhygiene/events.jsonl').text
assert report.contains('"type":"LEAK_RELEASED"')
