// Records a sentence in the browser and puts it in the form as a 16-bit mono WAV file, so the
// server takes it exactly like an uploaded one. MediaRecorder gives compressed audio (webm/ogg);
// the browser decodes it (decodeAudioData) and we write the samples as PCM. Browsers allow the
// microphone only on https or localhost: elsewhere the buttons stay hidden and upload remains.
(function () {
  "use strict";
  var form = document.getElementById("enrol-form");
  if (!form) return;
  if (!(navigator.mediaDevices && window.MediaRecorder && window.DataTransfer)) {
    document.getElementById("record-note").hidden = false;
    return;
  }

  function wav(buffer) {
    var n = buffer.length, rate = buffer.sampleRate, channels = buffer.numberOfChannels;
    var out = new DataView(new ArrayBuffer(44 + n * 2));
    function text(at, s) { for (var i = 0; i < s.length; i++) out.setUint8(at + i, s.charCodeAt(i)); }
    text(0, "RIFF"); out.setUint32(4, 36 + n * 2, true); text(8, "WAVE");
    text(12, "fmt "); out.setUint32(16, 16, true); out.setUint16(20, 1, true);
    out.setUint16(22, 1, true); out.setUint32(24, rate, true); out.setUint32(28, rate * 2, true);
    out.setUint16(32, 2, true); out.setUint16(34, 16, true);
    text(36, "data"); out.setUint32(40, n * 2, true);
    var data = [];
    for (var c = 0; c < channels; c++) data.push(buffer.getChannelData(c));
    for (var i = 0; i < n; i++) {
      var sum = 0;
      for (var c2 = 0; c2 < channels; c2++) sum += data[c2][i];
      var s = Math.max(-1, Math.min(1, sum / channels));
      out.setInt16(44 + i * 2, s < 0 ? s * 0x8000 : s * 0x7fff, true);
    }
    return new Blob([out], { type: "audio/wav" });
  }

  function attach(item, n) {
    var input = item.querySelector("input[type=file]");
    var button = item.querySelector("button.record");
    var player = item.querySelector("audio");
    var recorder = null;
    button.hidden = false;
    button.addEventListener("click", function () {
      if (recorder) { recorder.stop(); return; }
      navigator.mediaDevices.getUserMedia({ audio: true }).then(function (stream) {
        var chunks = [];
        recorder = new MediaRecorder(stream);
        recorder.ondataavailable = function (e) { chunks.push(e.data); };
        recorder.onstop = function () {
          stream.getTracks().forEach(function (t) { t.stop(); });
          recorder = null;
          button.textContent = "重录";
          new Blob(chunks).arrayBuffer()
            .then(function (bytes) { return new AudioContext().decodeAudioData(bytes); })
            .then(function (buffer) {
              var file = new File([wav(buffer)], "sentence-" + (n + 1) + ".wav", { type: "audio/wav" });
              var files = new DataTransfer();
              files.items.add(file);
              input.files = files.files;
              player.src = URL.createObjectURL(file);
              player.hidden = false;
            });
        };
        recorder.start();
        button.textContent = "停止";
      }, function (err) {
        document.getElementById("record-note").hidden = false;
        button.hidden = true;
      });
    });
  }

  var items = form.querySelectorAll("li.sentence");
  for (var i = 0; i < items.length; i++) attach(items[i], i);
})();
