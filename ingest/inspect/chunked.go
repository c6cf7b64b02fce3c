package inspect

// readChunked reads a sample stored in the chunked layout under
// samples/{dir}/.
func (a *archive) readChunked(dir string, sink Sink) (*Sample, error) {
	return nil, &Error{File: a.path, Entry: samplesDir + dir + "/", Msg: "the chunked sample layout is not read yet"}
}
