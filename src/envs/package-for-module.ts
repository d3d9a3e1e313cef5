/**
 * Import names whose PyPI package is named differently. Anything else: the package is assumed to share the
 * module's name (pypdf, lxml, numpy, openpyxl, …).
 */
const PYTHON_PACKAGES: Record<string, string> = {
  PIL: 'pillow',
  yaml: 'PyYAML',
  docx: 'python-docx',
  pptx: 'python-pptx',
  fitz: 'PyMuPDF',
  cv2: 'opencv-python',
  bs4: 'beautifulsoup4',
  sklearn: 'scikit-learn',
  skimage: 'scikit-image',
  dateutil: 'python-dateutil',
  dotenv: 'python-dotenv',
  magic: 'python-magic',
  Crypto: 'pycryptodome',
  OpenSSL: 'pyOpenSSL',
  google: 'google-api-python-client',
  attr: 'attrs',
  serial: 'pyserial',
  win32api: 'pywin32',
  jwt: 'PyJWT',
  Levenshtein: 'python-Levenshtein',
  imageio_ffmpeg: 'imageio-ffmpeg',
  pdfminer: 'pdfminer.six',
};

/** The PyPI package that likely provides top-level module `module`. */
export function packageForModule(module: string): string {
  const top = module.split('.')[0] ?? module;
  return PYTHON_PACKAGES[top] ?? top.replace(/_/g, '-');
}

/** Debian packages of commands skills commonly call. */
const COMMAND_PACKAGES: Record<string, string> = {
  soffice: 'libreoffice',
  libreoffice: 'libreoffice',
  pdftoppm: 'poppler-utils',
  pdftotext: 'poppler-utils',
  pdfinfo: 'poppler-utils',
  pdfimages: 'poppler-utils',
  qpdf: 'qpdf',
  gs: 'ghostscript',
  convert: 'imagemagick',
  magick: 'imagemagick',
  ffmpeg: 'ffmpeg',
  ffprobe: 'ffmpeg',
  tesseract: 'tesseract-ocr',
  pandoc: 'pandoc',
  git: 'git',
  curl: 'curl',
  wget: 'wget',
  zip: 'zip',
  unzip: 'unzip',
  jq: 'jq',
};

/** The Debian package that provides `command`, when known. */
export function debianPackageFor(command: string): string | undefined {
  return COMMAND_PACKAGES[command];
}
