(function () {
  var box = document.getElementById("lightbox"), big = box.querySelector("img");
  document.addEventListener("click", function (ev) {
    var b = ev.target.closest && ev.target.closest("button.shot");
    if (b) {
      var img = b.querySelector("img");
      big.src = img.src;
      big.alt = img.alt;
      box.showModal();
    } else if (box.open && box.contains(ev.target)) {
      box.close();
    }
  });
  box.addEventListener("close", function () { big.removeAttribute("src"); });
})();
