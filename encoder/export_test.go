package encoder

var SessionOptions = sessionOptions
